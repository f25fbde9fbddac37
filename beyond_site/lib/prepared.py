"""Queries the ORM builds once and the database runs many times: the two hot paths' tuning.

Building and compiling a query costs Django a few hundred microseconds, where SQLite answers it in
a few dozen. Two paths run at every event of every run, and there the building was most of the
work: the recorder's batch (`runs/recorder.py`) and the websocket's tail of a live page
(`chat/fragments.py`), the only users, the recorder's module also holding the reads of a run's
start, which every submission waits for (bench/README.md, "Throughput" and "Issue 30's regression
at 100 runs"; everywhere else, querysets).
A prepared query is written with the ORM as usual, with `Param("name")` where a value changes from
call to call. It is compiled once per database alias, on first use (or as the process warms up:
`compile_all`), and then runs its SQL with the new values through a cursor: the same SQL the ORM
would send, the same conversions of what comes back.

- `Prepared(build)`: a SELECT (a values_list, or model rows with select_related and annotations:
  the tail's read of a run and its steps); `rows()`, `first()`, `instances()`.
- `PreparedIn(build)`: a Prepared per length of an IN list (`build(params)` gets that many Params).
- `PreparedUpdate(build, **values)`: an UPDATE, values given as constants or Params, each prepared
  by the field it sets; returns the number of rows changed.
- `insert_rows(model, rows)`: a multi-row INSERT, the returned ids if asked.

A Param binds one value (`=`, `<`, `>`) as given, so a filter takes the database's form for the
column (ints and strings as they are). What a prepared query reads or writes is checked against
the ORM's own results on SQLite and PostgreSQL (tests/site/test_prepared.py). This module is the
one place the apps reach the ORM's compiler (tests/site/test_layers.py holds it there).
"""
from __future__ import annotations

import functools
import threading
import weakref
from datetime import datetime
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from django.db import DEFAULT_DB_ALIAS, connections, models
from django.db.transaction import TransactionManagementError
from django.db.models import Expression, Model, QuerySet
from django.db.models.query import get_related_populators
from django.db.models.sql import UpdateQuery
from django.utils import timezone


class Param(Expression):
    """A value given when a prepared query runs. With `field` (what PreparedUpdate gives the values
    it sets), the value is prepared by that field for the database, as a save would; otherwise it
    is bound as it is."""

    def __init__(self, name: str, field=None):
        super().__init__()
        # (not `self.field`: an Expression's name for its output field)
        self.name, self.prepare_as = name, field

    def __repr__(self) -> str:
        return f"Param({self.name!r})"

    def resolve_expression(self, *args, **kwargs):
        return self

    def as_sql(self, compiler, connection):
        return "%s", [self]

    def get_source_expressions(self):
        return []


@dataclass(frozen=True)
class _Compiled:
    sql: str
    #: Each bound parameter of the SQL, in order: a Param, or a constant the ORM put there.
    params: tuple
    #: Result conversions, as the ORM applies them: {column: (converters, expression)}.
    converters: dict
    #: For model rows, what Django's ModelIterable works out from the compiled query: the model,
    #: its columns' span and attnames, the populators of select_related rows, the annotations.
    model: type[Model] | None = None
    span: tuple[int, int] = (0, 0)
    attnames: tuple[str, ...] = ()
    related: tuple = ()
    annotations: tuple[tuple[str, int], ...] = ()
    #: A locking read (select_for_update): as with the ORM, only inside a transaction.
    locks: bool = False


def _bind(compiled: _Compiled, values: dict, connection) -> list:
    wanted = {p.name for p in compiled.params if isinstance(p, Param)}
    if wanted != values.keys():
        raise TypeError(f"this prepared query takes {sorted(wanted)}, not {sorted(values)}")
    bound = []
    for p in compiled.params:
        if not isinstance(p, Param):
            bound.append(p)
        elif p.prepare_as is not None:
            bound.append(p.prepare_as.get_db_prep_save(values[p.name], connection))
        elif values[p.name] is None:
            # "= NULL" matches nothing where the ORM would write "IS NULL": refuse rather than miss.
            raise TypeError(f"{p.name}: a prepared filter cannot compare with None")
        else:
            bound.append(values[p.name])
    return bound


class _OncePerAlias:
    """Compiles on first use for each database alias, and keeps what it compiled."""

    #: Every prepared query made so far (most are made as their module is imported), so that a
    #: server can compile them all as it starts (`compile_all`).
    made: weakref.WeakSet[_OncePerAlias] = weakref.WeakSet()
    made_lock = threading.Lock()

    def __init__(self):
        self._compiled: dict[str, _Compiled] = {}
        self._lock = threading.Lock()
        with _OncePerAlias.made_lock:
            _OncePerAlias.made.add(self)

    def _compile(self, alias: str) -> _Compiled:
        raise NotImplementedError

    def compiled(self, alias: str) -> _Compiled:
        found = self._compiled.get(alias)
        if found is None:
            with self._lock:
                found = self._compiled.get(alias) or self._compile(alias)
                self._compiled[alias] = found
        return found


def compile_all(using: str = DEFAULT_DB_ALIAS) -> int:
    """Compile, for `using`, every prepared query made so far that is not compiled yet (the server
    warming up: runtime/warmup.py); returns how many there are in all."""
    with _OncePerAlias.made_lock:
        made = list(_OncePerAlias.made)
    for query in made:
        query.compiled(using)
    return len(made)


class Prepared(_OncePerAlias):
    """A SELECT built by the ORM (`build` returns the queryset, with Params for what varies)."""

    def __init__(self, build: Callable[[], QuerySet]):
        super().__init__()
        self._build = build

    def _compile(self, alias: str) -> _Compiled:
        query = self._build().query
        compiler = query.get_compiler(alias)
        sql, params = compiler.as_sql()
        columns = [s[0] for s in compiler.select[:compiler.col_count]]
        converters = compiler.get_converters(columns)
        locks = bool(query.select_for_update and connections[alias].features.has_select_for_update)
        if query.values_select or not compiler.klass_info:
            return _Compiled(sql, tuple(params), converters, locks=locks)
        info = compiler.klass_info
        start, end = info["select_fields"][0], info["select_fields"][-1] + 1
        return _Compiled(sql, tuple(params), converters, model=info["model"], span=(start, end),
                         attnames=tuple(col.target.attname for col in columns[start:end]),
                         related=tuple(get_related_populators(info, compiler.select, alias)),
                         annotations=tuple((compiler.annotation_col_map or {}).items()), locks=locks)

    def rows(self, *, using: str = DEFAULT_DB_ALIAS, **values) -> list[tuple]:
        compiled = self.compiled(using)
        connection = connections[using]
        if compiled.locks and connection.get_autocommit():
            # The ORM checks this when it compiles, which a prepared query does once.
            raise TransactionManagementError("select_for_update cannot be used outside of a transaction.")
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, _bind(compiled, values, connection))
            rows = cursor.fetchall()
        if not compiled.converters:
            return [tuple(row) for row in rows]
        converted = []
        for row in rows:
            row = list(row)
            for position, (converters, expression) in compiled.converters.items():
                value = row[position]
                for converter in converters:
                    value = converter(value, expression, connection)
                row[position] = value
            converted.append(tuple(row))
        return converted

    def first(self, *, using: str = DEFAULT_DB_ALIAS, **values) -> tuple | None:
        """The first row, or None (give the queryset its LIMIT 1 to read no more than that)."""
        rows = self.rows(using=using, **values)
        return rows[0] if rows else None

    def instances(self, *, using: str = DEFAULT_DB_ALIAS, **values) -> list[Model]:
        """The rows as model instances, as the queryset would give them: columns not selected
        deferred (`.only()`), select_related rows attached, annotations set."""
        compiled = self.compiled(using)
        if compiled.model is None:
            raise TypeError("instances() needs a query of model rows, not values")
        model, names, (start, end) = compiled.model, compiled.attnames, compiled.span
        found = []
        for row in self.rows(using=using, **values):
            obj = model.from_db(using, names, row[start:end])
            for related in compiled.related:
                related.populate(row, obj)
            for name, position in compiled.annotations:
                setattr(obj, name, row[position])
            found.append(obj)
        return found


class PreparedIn:
    """A Prepared for each length of an IN list: `build(params)` gets that many Params and returns
    the queryset (`field__in=params`); `rows(values)` runs the one for len(values). Lists up to
    `KEPT` long keep their compiled SQL; a longer one is compiled for its call only."""

    KEPT = 64

    def __init__(self, build: Callable[[list[Param]], QuerySet]):
        self._build = build
        self._by_length: dict[int, Prepared] = {}

    def _for(self, length: int) -> Prepared:
        found = self._by_length.get(length)
        if found is None:
            found = Prepared(lambda: self._build([Param(f"in_{k}") for k in range(length)]))
            if length <= self.KEPT:
                self._by_length[length] = found
        return found

    def rows(self, values: list, *, using: str = DEFAULT_DB_ALIAS) -> list[tuple]:
        if not values:
            return []
        return self._for(len(values)).rows(using=using, **{f"in_{k}": v for k, v in enumerate(values)})


class PreparedUpdate(_OncePerAlias):
    """An UPDATE of the rows `build()` finds, setting `values` (constants or Params): the Params
    of the values are prepared by the fields they set."""

    def __init__(self, build: Callable[[], QuerySet], **values):
        super().__init__()
        self._build, self._values = build, values

    def _compile(self, alias: str) -> _Compiled:
        queryset = self._build()
        meta = queryset.model._meta
        values = {}
        for name, value in self._values.items():
            if isinstance(value, Param) and value.prepare_as is None:
                value = Param(value.name, field=meta.get_field(name))
            values[name] = value
        query = queryset.query.chain(UpdateQuery)
        query.add_update_values(values)
        query.annotations = {}
        sql, params = query.get_compiler(alias).as_sql()
        if query.related_updates:
            raise ValueError("a prepared update sets the columns of one table")
        return _Compiled(sql, tuple(params), {})

    def __call__(self, *, using: str = DEFAULT_DB_ALIAS, **values) -> int:
        compiled = self.compiled(using)
        connection = connections[using]
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, _bind(compiled, values, connection))
            return cursor.rowcount


_insert_sql: dict[tuple, str] = {}


def insert_rows(model: type[Model], rows: Iterable[dict], *, returning: bool = False,
                using: str = DEFAULT_DB_ALIAS) -> list[int]:
    """Insert `rows` ({attname: value}, the same keys in each) in one statement per batch the
    database allows, as `bulk_create` would (fields left out take their defaults; auto_now fields
    the time), without making a model instance of each. Returns the new primary keys, in order,
    when `returning`. A key that names no column is an error, not a column left to its default."""
    rows = list(rows)
    if not rows:
        return []
    connection = connections[using]
    meta = model._meta
    keys = rows[0].keys()
    unknown = keys - {f.attname for f in meta.concrete_fields}
    if unknown or any(row.keys() != keys for row in rows):
        raise TypeError(f"rows for {meta.label} must name the same columns, and only columns"
                        + (f" (not {sorted(unknown)})" if unknown else ""))
    fields = [f for f in meta.concrete_fields if not f.primary_key or f.attname in keys]
    now = timezone.now()
    plain = [_plain_type(field) for field in fields]
    prepared = []
    for row in rows:
        values = []
        for field, kind in zip(fields, plain):
            if getattr(field, "auto_now", False) or getattr(field, "auto_now_add", False):
                value = now  # as save() and bulk_create set them, whatever the row says
            elif field.attname in row:
                value = row[field.attname]
            else:
                value = field.get_default()
            if value is None and field.null:
                values.append(None)
            elif kind is datetime:
                if type(value) is datetime and value.tzinfo is not None:
                    # An aware datetime: its field's preparation only hands it to the backend.
                    values.append(connection.ops.adapt_datetimefield_value(value))
                else:
                    values.append(field.get_db_prep_save(value, connection))
            elif type(value) is kind:
                values.append(value)  # what get_db_prep_save would give back unchanged
            else:
                values.append(field.get_db_prep_save(value, connection))
        prepared.append(values)
    if returning and not connection.features.can_return_rows_from_bulk_insert:
        return _insert_one_by_one(connection, using, model, fields, prepared)  # SQLite before 3.35
    batch = connection.ops.bulk_batch_size(fields, prepared) or len(prepared)
    ids: list[int] = []
    with connection.cursor() as cursor:
        for start in range(0, len(prepared), batch):
            chunk = prepared[start:start + batch]
            cursor.execute(_insert(connection, using, model, fields, len(chunk), returning),
                           [value for values in chunk for value in values])
            if returning:
                ids += [row[0] for row in cursor.fetchall()]
    return ids


def _insert_one_by_one(connection, using: str, model, fields, prepared: list[list]) -> list[int]:
    ids = []
    with connection.cursor() as cursor:
        for values in prepared:
            cursor.execute(_insert(connection, using, model, fields, 1, False), values)
            ids.append(connection.ops.last_insert_id(cursor, model._meta.db_table, model._meta.pk.column))
    return ids


_PLAIN = ((models.BooleanField, bool), (models.FloatField, float), (models.IntegerField, int),
          (models.CharField, str), (models.TextField, str))


@functools.cache
def _plain_type(field) -> type | None:
    """The Python type whose values `field` binds as they are (its get_db_prep_save only checks
    them), or None when its values need preparing (JSON, decimals, bytes...); `datetime` for a
    date-time field, whose aware values go straight to the backend's adaptation."""
    if field.remote_field is not None:  # a foreign key binds what its target binds
        return _plain_type(field.target_field)
    if isinstance(field, models.DateTimeField):
        return datetime
    for cls, kind in _PLAIN:
        if isinstance(field, cls):
            return kind
    return None


def _insert(connection, using: str, model, fields, count: int, returning: bool) -> str:
    key = (using, model, tuple(f.attname for f in fields), count, returning)
    sql = _insert_sql.get(key)
    if sql is None:
        ops, quote = connection.ops, connection.ops.quote_name
        columns = ", ".join(quote(f.column) for f in fields)
        sql = (f"{ops.insert_statement()} {quote(model._meta.db_table)} ({columns}) "
               + ops.bulk_insert_sql(fields, [["%s"] * len(fields)] * count))
        if returning:
            sql += f" RETURNING {quote(model._meta.db_table)}.{quote(model._meta.pk.column)}"
        _insert_sql[key] = sql
    return sql
