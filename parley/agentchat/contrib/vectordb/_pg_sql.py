"""The SQL of ``PGVectorDB``: every statement built with ``psycopg.sql`` (names quoted as
identifiers, numbers as literals) and every value sent as a parameter."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from types import SimpleNamespace
from typing import Any

from ...._retrieve_embed import install_hint

__all__ = [
    "DISTANCE_OPERATORS",
    "INCLUDABLE",
    "checked_table_name",
    "connect",
    "create_table",
    "floats",
    "import_pg",
    "nearest_rows",
    "select_rows",
    "table_exists",
    "upsert_rows",
]

# pgvector's operators for Collection.query's distance types (unknown ones: Euclidean, as AutoGen).
DISTANCE_OPERATORS = {"euclidean": "<->", "cosine": "<=>", "inner-product": "<#>"}
# Collection.get's `include` names (AutoGen's, Chroma's and the Document fields) -> columns.
INCLUDABLE = {
    "documents": "documents",
    "contents": "documents",
    "metadatas": "metadatas",
    "metadata": "metadatas",
    "embedding": "embedding",
    "embeddings": "embedding",
}
_MAX_NAME_BYTES = 63  # PostgreSQL cuts longer names silently (NAMEDATALEN - 1)
_EF_SEARCH_MAX = 1000  # pgvector's limit for hnsw.ef_search
_INDEX_OPERATOR_CLASSES = ("vector_l2_ops", "vector_cosine_ops", "vector_ip_ops")


def import_pg() -> SimpleNamespace:
    """psycopg and pgvector's adapter (``ImportError`` naming the extra when missing)."""
    try:
        import psycopg
        from psycopg import sql
        from psycopg.types.json import Jsonb
    except ImportError as e:
        raise ImportError(install_hint("retrieve-pgvector", "psycopg")) from e
    try:
        from pgvector import Vector
        from pgvector.psycopg import register_vector
    except ImportError as e:
        raise ImportError(install_hint("retrieve-pgvector", "pgvector")) from e
    return SimpleNamespace(
        psycopg=psycopg, sql=sql, Jsonb=Jsonb, Vector=Vector, register_vector=register_vector
    )


def checked_table_name(name: str) -> str:
    """A collection's table name: hyphens become underscores (AutoGen's rule); a name
    PostgreSQL would cut short or cannot hold is a ``ValueError``."""
    if not isinstance(name, str) or not name:
        raise ValueError(f"A collection name must be a non-empty string, got {name!r}")
    table = name.replace("-", "_")
    if "\0" in table or len(table.encode("utf-8")) > _MAX_NAME_BYTES:
        raise ValueError(
            f"Invalid collection name {name!r}: PostgreSQL table names have at most "
            f"{_MAX_NAME_BYTES} bytes and no NUL character"
        )
    return table


def connect(
    conn: Any,
    connection_string: str | None,
    host: str | None,
    port: int | str | None,
    dbname: str | None,
    username: str | None,
    password: str | None,
    connect_timeout: int | None,
) -> Any:
    """``conn``, or a new autocommit connection; with the ``vector`` extension and its type."""
    pg = import_pg()
    timeout = {"connect_timeout": connect_timeout} if connect_timeout else {}
    if conn is not None:
        client = conn
    elif connection_string:
        client = pg.psycopg.connect(connection_string, autocommit=True, **timeout)
    elif host:
        # Keyword arguments: psycopg quotes each value into the connection string.
        client = pg.psycopg.connect(
            host=host,
            port=port,
            dbname=dbname,
            user=username,
            password=password,
            autocommit=True,
            **timeout,
        )
    else:
        raise PermissionError(
            "PGVectorDB needs a connection: pass conn=, connection_string=, or host= (with "
            "port=, dbname=, username=, password=)"
        )
    client.execute("CREATE EXTENSION IF NOT EXISTS vector")
    pg.register_vector(client)
    return client


def table_exists(client: Any, table: str) -> bool:
    row = client.execute(
        "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_tables "
        "WHERE schemaname = current_schema() AND tablename = %s)",
        (table,),
    ).fetchone()
    return bool(row[0])


def create_table(client: Any, table: str, dimension: int, metadata: Mapping[str, Any]) -> None:
    """The collection's table and AutoGen's three HNSW indexes, in one transaction."""
    sql = import_pg().sql
    name = sql.Identifier(table)
    settings = {
        "m": sql.Literal(int(metadata.get("hnsw:M", 16))),
        "ef": sql.Literal(int(metadata.get("hnsw:construction_ef", 32))),
    }
    with client.transaction():
        client.execute(
            sql.SQL(
                "CREATE TABLE {} (documents text, id text PRIMARY KEY, metadatas jsonb, "
                "embedding vector({}))"
            ).format(name, sql.Literal(int(dimension)))
        )
        for operator_class in _INDEX_OPERATOR_CLASSES:
            client.execute(
                sql.SQL(
                    "CREATE INDEX ON {} USING hnsw (embedding {}) WITH (m = {m}, "
                    "ef_construction = {ef})"
                ).format(name, sql.SQL(operator_class), **settings)
            )


def upsert_rows(
    client: Any,
    table: str,
    rows: Sequence[tuple[str, str, Sequence[float], Mapping[str, Any] | None]],
    replace: bool,
) -> None:
    """Write ``(id, content, vector, metadata)`` rows in one transaction; without ``replace``
    an id already stored is a ``ValueError`` and nothing is written."""
    pg = import_pg()
    sql = pg.sql
    statement = sql.SQL(
        "INSERT INTO {} (id, documents, embedding, metadatas) VALUES (%s, %s, %s, %s)"
    ).format(sql.Identifier(table))
    if replace:
        statement += sql.SQL(
            " ON CONFLICT (id) DO UPDATE SET documents = EXCLUDED.documents, "
            "embedding = EXCLUDED.embedding, metadatas = EXCLUDED.metadatas"
        )
    params = [
        (item_id, content, pg.Vector(vector), pg.Jsonb(dict(meta)) if meta else None)
        for item_id, content, vector, meta in rows
    ]
    try:
        with client.transaction(), client.cursor() as cursor:
            cursor.executemany(statement, params)
    except pg.psycopg.errors.UniqueViolation as e:
        raise ValueError(
            f"Documents with these ids already exist in {table}: use upsert=True to replace "
            f"them ({e.diag.message_detail or e})"
        ) from e


def select_rows(
    client: Any,
    table: str,
    ids: list[str] | None,
    include: Sequence[str],
    where: Mapping[str, Any] | None,
    limit: int | str | None,
    offset: int | str | None,
) -> list[dict[str, Any]]:
    """Rows (column -> value) with the id, the columns ``include`` names, and the embedding:
    those of ``ids`` in that order (all when None), whose metadata contains ``where``."""
    pg = import_pg()
    sql = pg.sql
    unknown = [f for f in include if f not in INCLUDABLE]
    if unknown:
        raise ValueError(f"Unknown fields to include: {unknown}; known: {sorted(INCLUDABLE)}")
    columns = dict.fromkeys(["id", *(INCLUDABLE[f] for f in include), "embedding"])
    conditions: list[Any] = []
    params: list[Any] = []
    if ids is not None:
        conditions.append(sql.SQL("id = ANY(%s)"))
        params.append(ids)
    if where is not None:
        conditions.append(sql.SQL("metadatas @> %s"))
        params.append(pg.Jsonb(dict(where)))
    query = sql.SQL("SELECT {} FROM {}").format(
        sql.SQL(", ").join(map(sql.Identifier, columns)), sql.Identifier(table)
    )
    if conditions:
        query += sql.SQL(" WHERE ") + sql.SQL(" AND ").join(conditions)
    if ids is not None:
        query += sql.SQL(" ORDER BY array_position(%s::text[], id)")
        params.append(ids)
    if limit:
        query += sql.SQL(" LIMIT %s")
        params.append(int(limit))
    if offset:
        query += sql.SQL(" OFFSET %s")
        params.append(int(offset))
    cursor = client.execute(query, params)
    names = [c.name for c in cursor.description]
    return [dict(zip(names, row, strict=True)) for row in cursor.fetchall()]


def nearest_rows(
    client: Any,
    table: str,
    vector: Sequence[float],
    distance_type: str,
    n: int,
    threshold: float,
) -> list[tuple[Any, ...]]:
    """``(id, documents, metadatas, embedding, distance)`` of the ``n`` rows nearest to
    ``vector``, nearest first; with a positive ``threshold`` only those nearer than it."""
    pg = import_pg()
    sql = pg.sql
    operator = sql.SQL(DISTANCE_OPERATORS.get(distance_type.lower(), "<->"))
    where = sql.SQL(" WHERE embedding {} %(q)s < %(t)s").format(operator)
    query = sql.SQL(
        "SELECT id, documents, metadatas, embedding, embedding {op} %(q)s AS distance "
        "FROM {table}{where} ORDER BY distance LIMIT %(n)s"
    ).format(
        op=operator,
        table=sql.Identifier(table),
        where=where if threshold > 0 else sql.SQL(""),
    )
    with client.transaction():
        # An HNSW index scan returns at most hnsw.ef_search rows: widen it to the rows asked for.
        client.execute(
            "SELECT set_config('hnsw.ef_search', %s, true)",
            (str(min(_EF_SEARCH_MAX, max(40, n))),),
        )
        rows: list[tuple[Any, ...]] = client.execute(
            query, {"q": pg.Vector(list(vector)), "n": n, "t": threshold}
        ).fetchall()
    return rows


def floats(vector: Any) -> list[float] | None:
    """A stored vector (pgvector's ``Vector``, numpy's array, a list) as a list of floats."""
    if vector is None:
        return None
    values = vector.to_list() if hasattr(vector, "to_list") else vector
    return [float(x) for x in values]
