"""Scalar expansion by accumulation into the destination: ``s = 0; for k: s += a*b; C[i][j] = s``
becomes ``C[i][j] = 0; for k: C[i][j] += a*b``, so the scalar no longer carries dependences across
the loops around it and they can be interchanged and tiled.

Legal when, per iteration of the ``d`` loops around the scalar's lifetime, the scalar is set by one
statement ``s = e`` (``e`` free of ``s``), only used by statements inside those loops between it and
one store ``X[f(i)] = s`` whose element ``f`` is injective in the outer iterators, and the
destination array is touched by nothing else in the nest. The store is dropped (statements after it
move down by one index).

The store may also be linear in ``s``: ``X[f] = g + h*s`` (or ``g - h*s``, ``h*s``, ``g + s``), as
in BLAS's ``C[i][j] = beta*C[i][j] + alpha*acc``. Then the initialization becomes ``X[f] = g + h*e``
(``X[f] = g`` when ``e`` is 0) and every update ``s += r`` becomes ``X[f] += h*r``, which is the same
sum with ``h`` distributed over it (equal up to rounding, checked by verification like every
variant). This needs ``h`` to read only constants and scalars the nest never writes, ``g`` to read
only ``X[f]`` itself and data the nest never writes (it is evaluated earlier than before), and every
other statement on ``s`` to be such an update.

Any other store ``X[f] = g(s)`` that does not read ``X`` (``fmax(s, 0)``, ``tanh(s)``, ``Y[i][j] + s*s``,
or a linear store whose factor cannot be distributed) keeps its statement as an epilogue: ``s`` is
replaced by ``X[f]`` everywhere, so the store becomes ``X[f] = g(X[f])``. ``X[f]`` holds exactly the
value ``s`` held at every point (nothing else touches ``X``), so the result is bit for bit the
original's; the epilogue only reads and writes the element its iteration owns, and the dependences
of every later step are computed on the rewritten nest. The general form (a new temporary array,
needed when ``g`` reads ``X`` or the store is not the last use) is not implemented: those cases are
refused naming why.
"""

from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from loopnest.errors import RecipeError
from loopnest.ir import (
    Access,
    ArrayRef,
    Binary,
    Call,
    Cast,
    Const,
    Expr,
    Scop,
    Statement,
    Ternary,
    Unary,
    Var,
)


def _uses(stmt: Statement, name: str) -> bool:
    return any(a.array == name for a in stmt.accesses)


def _reads(stmt: Statement, name: str) -> bool:
    return any(a.array == name for a in stmt.reads)


def _substitute(expr: Expr, name: str, ref: ArrayRef) -> Expr:
    match expr:
        case Var(n) if n == name:
            return ref
        case ArrayRef(n, subs):
            return ArrayRef(n, tuple(_substitute(s, name, ref) for s in subs))
        case Unary(op, operand):
            return Unary(op, _substitute(operand, name, ref))
        case Binary(op, left, right):
            return Binary(op, _substitute(left, name, ref), _substitute(right, name, ref))
        case Call(fn, args):
            return Call(fn, tuple(_substitute(a, name, ref) for a in args))
        case Cast(ctype, operand):
            return Cast(ctype, _substitute(operand, name, ref))
        case Ternary(c, t, o):
            return Ternary(*(_substitute(x, name, ref) for x in (c, t, o)))
    return expr


@dataclass(frozen=True)
class _StoreForm:
    """How the closing store uses ``s``: ``X[f] = g (+|-) h*s`` (``g`` None: absent, ``h`` None: 1, the
    sign), or any other ``X[f] = g(s)`` kept as an epilogue."""

    g: Expr | None = None
    h: Expr | None = None
    negate: bool = False
    epilogue: bool = False  # the store stays, as ``X[f] = g(X[f])``

    @property
    def plain(self) -> bool:
        return self.g is None and self.h is None and not self.negate and not self.epilogue


def _factor(expr: Expr, scalar: str) -> tuple[bool, Expr | None]:
    """(True, h) when ``expr`` is ``s``, ``h*s`` or ``s*h`` with ``h`` free of ``s``."""
    if expr == Var(scalar):
        return True, None
    if isinstance(expr, Binary) and expr.op == "*":
        if expr.left == Var(scalar) and scalar not in expr.right.names():
            return True, expr.right
        if expr.right == Var(scalar) and scalar not in expr.left.names():
            return True, expr.left
    return False, None


def _linear_store(value: Expr, scalar: str) -> _StoreForm | None:
    """``value`` as ``g (+|-) h*s``, or None when it is not linear in ``s`` that way."""
    ok, h = _factor(value, scalar)
    if ok:
        return _StoreForm(h=h)
    if isinstance(value, Binary) and value.op in ("+", "-"):
        ok, h = _factor(value.right, scalar)
        if ok and scalar not in value.left.names():
            return _StoreForm(g=value.left, h=h, negate=value.op == "-")
        ok, h = _factor(value.left, scalar)
        if ok and value.op == "+" and scalar not in value.right.names():
            return _StoreForm(g=value.right, h=h)
    return None


def _lifetime(scop: Scop, scalar: str) -> tuple[int, list[int], int, _StoreForm]:
    """(init, users in between, store, the store's form) of ``scalar``'s lifetime, or refuse."""
    info = scop.arrays.get(scalar)
    if info is None or not info.is_scalar or not info.written:
        raise RecipeError(f"expand: {scalar!r} is not a scalar the nest writes")
    if info.storage != "region":
        raise RecipeError(f"expand: {scalar} outlives the nest (storage {info.storage}): its final value "
                          "may be read after the loops; only scalars declared inside the nest are expanded")
    users = [s.index for s in scop.statements if _uses(s, scalar)]
    init, store = users[0], users[-1]
    first, last = scop.statements[init], scop.statements[store]
    if first.op != "=" or first.target != Var(scalar) or _reads(first, scalar):
        raise RecipeError(f"expand: the first statement on {scalar} (S{init}) is not an initialization "
                          f"'{scalar} = e' with e free of {scalar}")
    for stmt in (first, last):
        if stmt.guard is not None:  # the element would be written whatever the condition
            raise RecipeError(f"expand: S{stmt.index} on {scalar} runs under a condition on data; only an "
                              "unconditional initialization and store can be folded into the destination")
    if not isinstance(last.target, ArrayRef) or last.op != "=":
        raise RecipeError(f"expand: {scalar} is read by S{store} in another way than a store "
                          f"'X[...] = g({scalar})' closing its lifetime; the general form (a temporary array) "
                          "is not implemented")
    form = _linear_store(last.value, scalar)
    reads_dest = _reads(last, last.target.name)  # then an epilogue would read X[f] after the init overwrote it
    if form is not None and not form.plain:
        try:
            _check_linear(scop, scalar, users[1:-1], last, form)
        except RecipeError:
            if reads_dest:
                raise
            form = None
    if form is None:
        if reads_dest:
            raise RecipeError(f"expand: S{store} reads its destination {last.target.name} besides {scalar} in "
                              f"another form than 'X[...] = g + h*{scalar}'; the general form (a temporary "
                              "array) is not implemented")
        form = _StoreForm(epilogue=True)
    return init, users[1:-1], store, form


def _check_linear(scop: Scop, scalar: str, middle: list[int], last: Statement, form: _StoreForm) -> None:
    """``h`` is loop-invariant, ``g`` can move to the initialization, and every other use is an update."""
    written = {name for name, info in scop.arrays.items() if info.written}
    if form.h is not None and (form.h.names() & written
                               or any(isinstance(e, ArrayRef) for e in form.h.walk())):
        raise RecipeError(f"expand: the factor of {scalar} in S{last.index} reads more than constants and "
                          "scalars the nest never writes")
    dest = last.target
    assert isinstance(dest, ArrayRef)
    if form.g is not None:
        moved = [e for e in form.g.walk() if isinstance(e, (Var, ArrayRef)) and e.name in written and e != dest]
        if moved:
            raise RecipeError(f"expand: S{last.index} reads {moved[0].name}, which the nest writes, besides "
                              f"{scalar}: it cannot be evaluated where {scalar} is initialized")
    for index in middle:
        stmt = scop.statements[index]
        if (stmt.target != Var(scalar) or stmt.op not in ("+=", "-=") or scalar in stmt.value.names()
                or (stmt.guard is not None and scalar in stmt.guard.names())):
            raise RecipeError(f"expand: S{index} uses {scalar} in another way than '{scalar} += r' "
                              f"or '{scalar} -= r', so the factor of S{last.index} cannot be distributed")


def _check_shape(scop: Scop, scalar: str, init: int, middle: list[int], store: int) -> None:
    """The lifetime lies inside the ``d`` loops around init and store, once per outer iteration."""
    first, last = scop.statements[init], scop.statements[store]
    d = first.depth
    rows = scop.schedule.rows
    if last.depth != d or rows[init][:2 * d] != rows[store][:2 * d]:
        raise RecipeError(f"expand: the initialization S{init} and the store S{store} of {scalar} are not in "
                          "the same loops")
    if not isl.Set(first.domain).set_tuple_name(last.name).is_equal(isl.Set(last.domain)):
        raise RecipeError(f"expand: S{init} and S{store} do not run for the same iterations")
    for s in middle:
        if scop.statements[s].depth < d or rows[s][:2 * d] != rows[init][:2 * d]:
            raise RecipeError(f"expand: S{s} uses {scalar} outside the loops of its lifetime (S{init}..S{store})")
    dest = last.target
    assert isinstance(dest, ArrayRef)
    write = isl.Map(last.writes[0].relation)
    if not write.is_injective():
        raise RecipeError(f"expand: the store {last.writes[0].subscript_text()} writes one element in several "
                          f"iterations; {scalar} cannot accumulate into it")
    others = [s.index for s in scop.statements if s.index != store and _uses(s, dest.name)]
    if others:
        raise RecipeError(f"expand: the destination {dest.name} is also accessed by S{others[0]}")
    if scop.arrays[dest.name].element_type != scop.arrays[scalar].element_type:
        raise RecipeError(f"expand: {scalar} ({scop.arrays[scalar].element_type}) and {dest.name} "
                          f"({scop.arrays[dest.name].element_type}) have different types")


def _rewrite(stmt: Statement, scalar: str, ref: ArrayRef, subscripts: tuple[str, ...], params: str) -> Statement:
    """``stmt`` with ``scalar`` replaced by the destination element, accesses rebuilt on its domain."""
    domain = isl.Set(stmt.domain)
    image = ", ".join(subscripts)
    its = ", ".join(f"i{k}" for k in range(stmt.depth))
    relation = isl.Map(f"[{params}] -> {{ {stmt.name}[{its}] -> {ref.name}[{image}] }}").intersect_domain(domain)
    accesses: list[Access] = []
    for acc in stmt.accesses:
        if acc.array == scalar:
            accesses.append(Access(ref.name, subscripts, acc.is_write, str(relation)))
        else:
            accesses.append(acc)
    target = ref if stmt.target == Var(scalar) else stmt.target
    guard = None if stmt.guard is None else _substitute(stmt.guard, scalar, ref)
    return stmt.replace(target=target, value=_substitute(stmt.value, scalar, ref), accesses=tuple(accesses),
                        declares=None, guard=guard)


def _renumber(stmt: Statement, index: int) -> Statement:
    if stmt.index == index:
        return stmt

    def rename(text: str) -> str:
        m = isl.Map(text)
        return str(m.set_tuple_name(isl.dim_type.in_, f"S{index}"))

    domain = str(isl.Set(stmt.domain).set_tuple_name(f"S{index}"))
    accesses = tuple(Access(a.array, a.subscripts, a.is_write, rename(a.relation), a.approximated, a.reason)
                     for a in stmt.accesses)
    return stmt.replace(index=index, domain=domain, accesses=accesses)


def _is_zero(expr: Expr) -> bool:
    if not isinstance(expr, Const):
        return False
    try:
        return float(expr.text.rstrip("fFlLuU")) == 0.0
    except ValueError:
        return False


def _scaled(form: _StoreForm, expr: Expr) -> Expr:
    return expr if form.h is None else Binary("*", form.h, expr)


def _linear_init(stmt: Statement, store: Statement, form: _StoreForm) -> Statement:
    """The rewritten initialization ``X[f] = e`` as ``X[f] = g + h*e``, with ``g``'s reads moved in."""
    term = None if _is_zero(stmt.value) else _scaled(form, stmt.value)
    if form.g is None:
        value = stmt.value if term is None else (Unary("-", term) if form.negate else term)
    else:
        value = form.g if term is None else Binary("-" if form.negate else "+", form.g, term)
    read_by_g = form.g.names() if form.g is not None else set()
    moved = tuple(Access(acc.array, acc.subscripts, False,
                         str(isl.Map(acc.relation).set_tuple_name(isl.dim_type.in_, stmt.name)),
                         acc.approximated, acc.reason)
                  for acc in store.accesses if not acc.is_write and acc.array in read_by_g)
    # The read of g comes before the write of X[f], as in the store it replaces.
    return stmt.replace(value=value, accesses=(*moved, *stmt.accesses))


def _linear_update(stmt: Statement, form: _StoreForm) -> Statement:
    """``X[f] += r`` as ``X[f] += h*r`` (``-=`` when the store subtracts)."""
    op = {"+=": "-=", "-=": "+="}[stmt.op] if form.negate else stmt.op
    return stmt.replace(op=op, value=_scaled(form, stmt.value))


def expand(scop: Scop, *, scalar: str) -> Scop:
    """``scop`` with ``scalar`` accumulated directly into the element its lifetime ends storing to."""
    init, middle, store, form = _lifetime(scop, scalar)
    _check_shape(scop, scalar, init, middle, store)
    last = scop.statements[store]
    dest = last.target
    assert isinstance(dest, ArrayRef)
    subscripts = last.writes[0].subscripts
    params = ", ".join(scop.params)
    arrays = {k: v for k, v in scop.arrays.items() if k != scalar}
    if form.epilogue:  # every use of the scalar becomes the element; no statement moves
        users = {init, store, *middle}
        rewritten = tuple(_rewrite(stmt, scalar, dest, subscripts, params) if stmt.index in users else stmt
                          for stmt in scop.statements)
        return scop.replace(statements=rewritten, arrays=arrays)
    statements: list[Statement] = []
    for stmt in scop.statements:
        if stmt.index == store:
            continue
        if stmt.index == init or stmt.index in middle:
            stmt = _rewrite(stmt, scalar, dest, subscripts, params)
            if not form.plain:
                stmt = _linear_init(stmt, last, form) if stmt.index == init else _linear_update(stmt, form)
        statements.append(_renumber(stmt, len(statements)))
    rows = tuple(r for k, r in enumerate(scop.schedule.rows) if k != store)
    loops = tuple(loop.__class__(loop.depth, loop.iterator, loop.lower, loop.condition, loop.step,
                                 tuple(s - (s > store) for s in loop.statements if s != store))
                  for loop in scop.loops)
    return scop.replace(statements=tuple(statements), arrays=arrays, loops=loops,
                        schedule=scop.schedule.replace(rows=rows))
