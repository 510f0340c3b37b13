"""A small corpus the tests write: one document per format, each about one topic.

The PDF is written by hand (one page, Helvetica text lines), so that reading it goes through
the real PDF reader without a PDF-writing library; the Word file is written by python-docx.
"""

from __future__ import annotations

from pathlib import Path

VOLCANO = [
    "Mount Etna is an active volcano on the east coast of Sicily.",
    "Its eruptions are frequent; lava flows reach the villages on its slopes.",
]
VOLCANO_MORE = [
    "Etna is the highest volcano in Europe outside the Caucasus, about 3,357 metres tall.",
]
BREAD = [
    "# Sourdough bread",
    "",
    "Sourdough bread rises with a starter of wild yeast instead of baker's yeast.",
    "Feed the starter with flour and water the day before baking.",
]
TRAINS_HTML = """<html><head><title>Bullet trains</title><script>var x = 1;</script></head>
<body><h1>Shinkansen</h1>
<p>The Shinkansen is the Japanese high-speed railway; its bullet trains run at 320 km/h.</p>
<p>The first line opened between Tokyo and Osaka in 1964.</p></body></html>
"""
OCEAN = [
    "The Mariana Trench is the deepest part of the ocean.",
    "Its deepest point, the Challenger Deep, is about 10,935 metres below sea level.",
]
GARDEN = [
    "Tomato plants in the garden need full sun and regular watering.",
    "Pinch out the side shoots of tomato plants so the fruit ripens.",
]


def minimal_pdf(lines: list[str]) -> bytes:
    """A one-page PDF showing ``lines`` in Helvetica, with a correct cross-reference table."""

    def escape(text: str) -> str:
        return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")

    shown = " T* ".join(f"({escape(line)}) Tj" for line in lines)
    stream = f"BT /F1 11 Tf 14 TL 72 720 Td {shown} ET".encode("latin-1")
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        xref,
    )
    return bytes(out)


def write_docx(path: Path, lines: list[str]) -> None:
    import docx

    document = docx.Document()
    for line in lines:
        document.add_paragraph(line)
    document.save(str(path))


def write_corpus(root: Path) -> Path:
    """The corpus under ``root/docs`` (volcano.txt in a sub-directory); returns that dir."""
    docs = root / "docs"
    (docs / "geology").mkdir(parents=True)
    (docs / "geology" / "volcano.txt").write_text(
        "\n".join(VOLCANO) + "\n\n" + "\n".join(VOLCANO_MORE) + "\n"
    )
    (docs / "bread.md").write_text("\n".join(BREAD) + "\n")
    (docs / "trains.html").write_text(TRAINS_HTML)
    (docs / "ocean.pdf").write_bytes(minimal_pdf(OCEAN))
    write_docx(docs / "garden.docx", GARDEN)
    return docs
