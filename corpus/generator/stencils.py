"""Stencils in one, two and three dimensions: star and box shapes of several radii, Jacobi (two arrays,
with copy-back or ping-pong time loops), in-place Gauss-Seidel, heat/wave/variable-coefficient forms."""

from __future__ import annotations

import itertools
import random
from dataclasses import dataclass

from corpus.generator.core import TAG, Kernel, Scaled, lit, loop

IDX = ("i", "j", "k")
Offset = tuple[int, ...]


def star(d: int, r: int) -> list[Offset]:
    pts = [(0,) * d]
    for axis in range(d):
        for dist in range(1, r + 1):
            for sign in (-1, 1):
                pts.append(tuple(sign * dist if a == axis else 0 for a in range(d)))
    return pts


def box(d: int, r: int) -> list[Offset]:
    return list(itertools.product(range(-r, r + 1), repeat=d))


def ref(arr: str, off: Offset, idx: tuple[str, ...] = IDX) -> str:
    subs = []
    for v, o in zip(idx, off, strict=False):
        subs.append(v if o == 0 else f"{v} + {o}" if o > 0 else f"{v} - {-o}")
    return arr + "".join(f"[{s}]" for s in subs)


def _join(terms: list[str], width: int = 64) -> str:
    """``a + b + ...``, broken into lines of about ``width`` characters (continuations start with ``+``)."""
    text = terms[0]
    for term in terms[1:]:
        if len(text.split("\n")[-1]) + 3 + len(term.split("\n")[0]) > width:
            text += "\n+ " + term
        else:
            text += " + " + term
    return text


def grouped(arr: str, pts: list[Offset], klass, coef: dict, t: str) -> str:
    """sum over classes of coef * (sum of the points of that class)."""
    groups: dict = {}
    for p in pts:
        groups.setdefault(klass(p), []).append(p)
    terms = []
    for key in sorted(groups):
        refs = [ref(arr, p) for p in groups[key]]
        inner = refs[0] if len(refs) == 1 else "(" + _join(refs, 56) + ")"
        terms.append(f"{lit(coef[key], t)} * {inner}")
    return _join(terms)


def coefficients(rng: random.Random, pts: list[Offset], klass, total: float = 1.0) -> dict:
    keys = sorted({klass(p) for p in pts})
    raw = {k: rng.uniform(0.3, 1.0) for k in keys}
    mass = sum(raw[klass(p)] for p in pts)
    return {k: round(total * v / mass, 4) for k, v in raw.items()}


def _dist(p: Offset) -> int:
    return max(abs(o) for o in p)


def _nnz(p: Offset) -> int:
    return sum(1 for o in p if o)


def _aniso(p: Offset) -> tuple[int, int]:
    for a, o in enumerate(p):
        if o:
            return (a + 1, abs(o))
    return (0, 0)


class Grid:
    """Sizes, bounds and array declarations of a d-dimensional grid with a halo of width r."""

    def __init__(self, rng: random.Random, d: int, r: int, t: str, *, halo: bool = False,
                 square: bool | None = None):
        self.d, self.r, self.t, self.halo = d, r, t, halo
        if square is None:
            square = rng.random() < 0.5
        names = {1: ["n"], 2: ["n", "m"], 3: ["nx", "ny", "nz"]}[d]
        self.extent = [names[0]] * d if square else names
        self.ints = list(dict.fromkeys(self.extent))

    def dims(self) -> tuple[str, ...]:
        return tuple(f"{e} + {2 * self.r}" if self.halo else e for e in self.extent)

    def bounds(self, order: str | None = None) -> list[tuple[str, str, str]]:
        r = self.r
        spec = [(IDX[a], str(r), f"{e} + {r}" if self.halo else f"{e} - {r}") for a, e in enumerate(self.extent)]
        if order:
            spec = [spec[IDX.index(v)] for v in order]
        return spec

    def sizes(self, tsteps: int | None = None) -> dict:
        s: dict = {p: Scaled(1.0, 2 * self.r + 2) for p in self.ints}
        if tsteps is not None:
            s["tsteps"] = tsteps
        return s

    def at(self, arr: str) -> str:
        return ref(arr, (0,) * self.d)


def _tsteps(rng: random.Random, d: int) -> int:
    return rng.choice({1: [10, 20, 50, 100, 200], 2: [5, 10, 20, 40, 50], 3: [2, 4, 5, 8, 10]}[d])


_TIMING = {"jac": "no time loop", "copy": "time loop with copy-back", "pp": "time loop, ping-pong between A and B",
           "seidel": "in place (Gauss-Seidel), no time loop", "seidel_t": "in place (Gauss-Seidel), time loop"}


@dataclass(frozen=True)
class _Jacobi:
    """The Jacobi-style stencils of one family, drawing their random choices from ``rng``."""

    rng: random.Random
    family: str

    def __call__(self, name: str, what: str, pts: list[Offset], klass, form: str, *,
                 halo: bool = False, order: str | None = None, expr: str = "grouped", square: bool | None = None,
                 t: str | None = None) -> Kernel:
        """A stencil over the offsets ``pts`` (their length is the dimension); form is one of jac, copy (time
        loop, copy back), pp (time loop, ping-pong), seidel (in place), seidel_t (in place, time loop)."""
        rng, fam, d = self.rng, self.family, len(pts[0])
        t = t or rng.choice(("float", "double"))
        r = max(_dist(p) for p in pts)
        g = Grid(rng, d, r, t, halo=halo, square=square)
        coef = coefficients(rng, pts, klass, rng.choice([1.0, 1.0, 0.99, 0.95]))
        heat_c = lit(rng.choice([0.05, 0.1, 0.125, 0.15]), t)

        def rhs(src: str) -> str:
            if expr == "mean":
                return "(" + _join([ref(src, p) for p in pts]) + f") / {lit(float(len(pts)), t)}"
            if expr == "heat":
                nb = [ref(src, p) for p in pts if any(p)]
                mid = ref(src, (0,) * d)
                return f"{mid} + {heat_c} * (" + _join(nb, 48) + f" - {lit(2.0 * d, t)} * {mid})"
            return grouped(src, pts, klass, coef, t)

        bnd = g.bounds(order)
        A, B = g.at("A"), g.at("B")
        arrays = [(t, "A", g.dims()), (t, "B", g.dims())]
        if form == "jac":
            body, sizes = loop(bnd, f"{B} = {rhs('A')}"), g.sizes()
        elif form == "copy":
            body = loop([("t", 0, "tsteps")], [*loop(bnd, f"{B} = {rhs('A')}"), *loop(bnd, f"{A} = {B}")])
            sizes = g.sizes(_tsteps(rng, d))
        elif form == "pp":
            body = loop([("t", 0, "tsteps")], [*loop(bnd, f"{B} = {rhs('A')}"), *loop(bnd, f"{A} = {rhs('B')}")])
            sizes = g.sizes(_tsteps(rng, d))
        elif form == "seidel":
            body, sizes, arrays = loop(bnd, f"{A} = {rhs('A')}"), g.sizes(), arrays[:1]
        elif form == "seidel_t":
            body = loop([("t", 0, "tsteps")], loop(bnd, f"{A} = {rhs('A')}"))
            sizes, arrays = g.sizes(_tsteps(rng, d)), arrays[:1]
        else:
            raise ValueError(form)
        ints = (["tsteps"] if "tsteps" in sizes else []) + g.ints
        desc = f"{what}, {len(pts)}-point, {_TIMING[form]}" + (", halo-padded arrays" if halo else "") + \
            (f", loop order {order}" if order else "") + f" ({t})."
        return Kernel(fam, f"{name}_{TAG[t]}", desc, t, ints, arrays, body, sizes)


def stencil_1d(rng: random.Random) -> list[Kernel]:
    fam = "stencil_1d"
    jacobi = _Jacobi(rng, fam)
    out = []
    for r in (1, 2, 3):
        pts = star(1, r)
        out.append(jacobi(f"jacobi1d_r{r}", "1-D symmetric stencil", pts, _dist, "jac"))
        out.append(jacobi(f"jacobi1d_r{r}_copy", "1-D symmetric stencil", pts, _dist, "copy"))
    for r in (1, 2):
        pts = star(1, r)
        out.append(jacobi(f"jacobi1d_r{r}_pp", "1-D symmetric stencil", pts, _dist, "pp"))
        out.append(jacobi(f"seidel1d_r{r}", "1-D smoother", pts, _dist, "seidel"))
        out.append(jacobi(f"seidel1d_r{r}_t", "1-D smoother", pts, _dist, "seidel_t"))
    out.append(jacobi("jacobi1d_r4", "1-D wide (9-point) symmetric stencil", star(1, 4), _dist, "jac"))
    out.append(jacobi("jacobi1d_halo", "1-D 3-point stencil", star(1, 1), _dist, "jac", halo=True))
    out.append(jacobi("jacobi1d_halo_copy", "1-D 3-point stencil", star(1, 1), _dist, "copy",
                      halo=True))
    out.append(jacobi("mean1d_r1", "1-D moving average", star(1, 1), _dist, "jac", expr="mean"))
    out.append(jacobi("mean1d_r2_pp", "1-D moving average", star(1, 2), _dist, "pp", expr="mean"))
    out.append(jacobi("heat1d_pp", "1-D explicit heat equation", star(1, 1), _dist, "pp", expr="heat"))
    # asymmetric and multi-array 1-D kernels
    t = rng.choice(("float", "double"))
    c = lit(rng.choice([0.2, 0.3, 0.4]), t)
    out.append(Kernel(fam, f"upwind1d_{TAG[t]}", f"first-order upwind advection u -= c (u[i] - u[i-1]) with a "
                      f"time loop and copy-back ({t}).", t, ["tsteps", "n"], [(t, "u", ("n",)), (t, "v", ("n",))],
                      loop([("t", 0, "tsteps")], [*loop([("i", 1, "n")], f"v[i] = u[i] - {c} * (u[i] - u[i - 1])"),
                                                  *loop([("i", 1, "n")], "u[i] = v[i]")]),
                      {"tsteps": _tsteps(rng, 1), "n": Scaled(1.0, 4)}))
    t = rng.choice(("float", "double"))
    out.append(Kernel(fam, f"upwind2_1d_{TAG[t]}", f"second-order one-sided difference "
                      f"d[i] = 1.5 u[i] - 2 u[i-1] + 0.5 u[i-2] ({t}).", t, ["n"], [(t, "u", ("n",)), (t, "d", ("n",))],
                      loop([("i", 2, "n")], f"d[i] = {lit(1.5, t)} * u[i] - {lit(2.0, t)} * u[i - 1] + "
                                            f"{lit(0.5, t)} * u[i - 2]"), {"n": Scaled(1.0, 4)}))
    for timed in (False, True):
        t = rng.choice(("float", "double"))
        rhs = f"{lit(0.3, t)} * (a[i] * A[i - 1] + b[i] * A[i] + c[i] * A[i + 1])"
        arrays = [(t, "A", ("n",)), (t, "B", ("n",)), (t, "a", ("n",)), (t, "b", ("n",)), (t, "c", ("n",))]
        if timed:
            body = loop([("t", 0, "tsteps")], [*loop([("i", 1, "n - 1")], f"B[i] = {rhs}"),
                                               *loop([("i", 1, "n - 1")], "A[i] = B[i]")])
            sizes = {"tsteps": _tsteps(rng, 1), "n": Scaled(1.0, 4)}
        else:
            body, sizes = loop([("i", 1, "n - 1")], f"B[i] = {rhs}"), {"n": Scaled(1.0, 4)}
        out.append(Kernel(fam, f"varcoef1d{'_t' if timed else ''}_{TAG[t]}", "1-D 3-point stencil with "
                          f"variable coefficients a, b, c{', time loop with copy-back' if timed else ''} ({t}).", t,
                          (["tsteps"] if timed else []) + ["n"], arrays, body, sizes))
    t = rng.choice(("float", "double"))
    c2 = lit(rng.choice([0.1, 0.2, 0.25]), t)
    out.append(Kernel(fam, f"wave1d_{TAG[t]}", f"1-D wave equation, leapfrog with three time levels and rotation "
                      f"of the arrays each step ({t}).", t, ["tsteps", "n"],
                      [(t, "up", ("n",)), (t, "u", ("n",)), (t, "un", ("n",))],
                      loop([("t", 0, "tsteps")], [
                          *loop([("i", 1, "n - 1")],
                                f"un[i] = {lit(2.0, t)} * u[i] - up[i] + {c2} * "
                                f"(u[i - 1] - {lit(2.0, t)} * u[i] + u[i + 1])"),
                          *loop([("i", 1, "n - 1")], ["up[i] = u[i]", "u[i] = un[i]"])]),
                      {"tsteps": _tsteps(rng, 1), "n": Scaled(1.0, 4)}))
    return out


def stencil_2d(rng: random.Random) -> list[Kernel]:
    fam = "stencil_2d"
    return _jacobi_like_2d(_Jacobi(rng, fam)) + _pde_2d(rng, fam)


def _jacobi_like_2d(jacobi: _Jacobi) -> list[Kernel]:
    """The 2-D stencils of one update in several shapes, forms, orders and halos."""
    out = []
    shapes = {"5pt": (star(2, 1), _dist), "9pt_box": (box(2, 1), _nnz), "9pt_star": (star(2, 2), _dist),
              "13pt_star": (star(2, 3), _dist)}
    for label, (pts, kl) in shapes.items():
        for form in ("jac", "copy", "pp"):
            suffix = {"jac": "", "copy": "_copy", "pp": "_pp"}[form]
            out.append(jacobi(f"jacobi2d_{label}{suffix}", f"2-D {label.split('_')[-1]} stencil", pts, kl, form))
    out.append(jacobi("seidel2d_5pt", "2-D 5-point Gauss-Seidel sweep", star(2, 1), _dist, "seidel"))
    out.append(jacobi("seidel2d_5pt_t", "2-D 5-point Gauss-Seidel", star(2, 1), _dist, "seidel_t"))
    out.append(jacobi("seidel2d_9pt_t", "2-D 9-point Gauss-Seidel averaging", box(2, 1), _nnz,
                      "seidel_t", expr="mean"))
    out.append(jacobi("heat2d_pp", "2-D explicit heat equation", star(2, 1), _dist, "pp", expr="heat"))
    out.append(jacobi("blur2d_3x3", "2-D 3x3 box blur", box(2, 1), _nnz, "jac", expr="mean"))
    out.append(jacobi("jacobi2d_5pt_ji", "2-D 5-point stencil traversed column by column", star(2, 1),
                      _dist, "jac", order="ji", square=False))
    out.append(jacobi("jacobi2d_9pt_box_ji_copy", "2-D 9-point box stencil traversed column by column",
                      box(2, 1), _nnz, "copy", order="ji"))
    out.append(jacobi("aniso2d_5pt", "2-D anisotropic 5-point stencil (x and y weights differ)",
                      star(2, 1), _aniso, "jac"))
    out.append(jacobi("jacobi2d_5pt_halo", "2-D 5-point stencil", star(2, 1), _dist, "jac", halo=True))
    out.append(jacobi("jacobi2d_9pt_star_halo_copy", "2-D 9-point star stencil", star(2, 2), _dist,
                      "copy", halo=True))
    out.append(jacobi("jacobi2d_25pt_box", "2-D 5x5 box stencil", box(2, 2),
                      lambda p: abs(p[0]) + abs(p[1]), "jac"))
    return out


def _pde_2d(rng: random.Random, fam: str) -> list[Kernel]:
    """2-D stencils with their own statements: variable coefficients, wave, Sobel, FDTD, residual."""
    return _coefficient_and_wave_2d(rng, fam) + _gradient_fdtd_residual_2d(rng, fam)


def _coefficient_and_wave_2d(rng: random.Random, fam: str) -> list[Kernel]:
    out = []
    for timed in (False, True):
        t = rng.choice(("float", "double"))
        g = Grid(rng, 2, 1, t)
        rhs = (f"{lit(0.19, t)} * (c0[i][j] * A[i][j] + c1[i][j] * (A[i - 1][j] + A[i + 1][j])\n"
               f"+ c2[i][j] * (A[i][j - 1] + A[i][j + 1]))")
        arrays = [(t, "A", g.dims()), (t, "B", g.dims()), (t, "c0", g.dims()), (t, "c1", g.dims()),
                  (t, "c2", g.dims())]
        bnd = g.bounds()
        if timed:
            body = loop([("t", 0, "tsteps")], [*loop(bnd, f"B[i][j] = {rhs}"), *loop(bnd, "A[i][j] = B[i][j]")])
        else:
            body = loop(bnd, f"B[i][j] = {rhs}")
        out.append(Kernel(fam, f"varcoef2d{'_t' if timed else ''}_{TAG[t]}", "2-D 5-point stencil with "
                          f"per-point coefficient arrays{', time loop with copy-back' if timed else ''} ({t}).", t,
                          (["tsteps"] if timed else []) + g.ints, arrays, body,
                          g.sizes(_tsteps(rng, 2) if timed else None)))
    t = rng.choice(("float", "double"))
    g = Grid(rng, 2, 1, t)
    bnd = g.bounds()
    lap = "U[i - 1][j] + U[i + 1][j] + U[i][j - 1] + U[i][j + 1] - " + lit(4.0, t) + " * U[i][j]"
    out.append(Kernel(fam, f"wave2d_{TAG[t]}", f"2-D wave equation (leapfrog, three levels rotated each step) "
                      f"({t}).", t, ["tsteps", *g.ints], [(t, "P", g.dims()), (t, "U", g.dims()), (t, "N", g.dims())],
                      loop([("t", 0, "tsteps")], [
                          *loop(bnd, f"N[i][j] = {lit(2.0, t)} * U[i][j] - P[i][j]\n+ {lit(0.1, t)} * ({lap})"),
                          *loop(bnd, ["P[i][j] = U[i][j]", "U[i][j] = N[i][j]"])]), g.sizes(_tsteps(rng, 2))))
    return out


def _gradient_fdtd_residual_2d(rng: random.Random, fam: str) -> list[Kernel]:
    out = []
    t = rng.choice(("float", "double"))
    g = Grid(rng, 2, 1, t)
    sq = "sqrtf" if t == "float" else "sqrt"
    two = lit(2.0, t)
    out.append(Kernel(fam, f"sobel2d_{TAG[t]}", f"Sobel edge magnitude: two 3x3 gradient stencils through local "
                      f"temporaries and a square root ({t}).", t, g.ints, [(t, "I", g.dims()), (t, "G", g.dims())],
                      loop(g.bounds(), [
                          f"{t} gx = I[i - 1][j + 1] + {two} * I[i][j + 1] + I[i + 1][j + 1]\n"
                          f"- I[i - 1][j - 1] - {two} * I[i][j - 1] - I[i + 1][j - 1]",
                          f"{t} gy = I[i + 1][j - 1] + {two} * I[i + 1][j] + I[i + 1][j + 1]\n"
                          f"- I[i - 1][j - 1] - {two} * I[i - 1][j] - I[i - 1][j + 1]",
                          f"G[i][j] = {sq}(gx * gx + gy * gy)"]), g.sizes()))
    t = rng.choice(("float", "double"))
    out.append(Kernel(fam, f"fdtd2d_{TAG[t]}", f"2-D FDTD (Yee scheme): ey, ex and hz updated in turn every time "
                      f"step, with a source row from fict ({t}).", t, ["tsteps", "nx", "ny"],
                      [(t, "ex", ("nx", "ny")), (t, "ey", ("nx", "ny")), (t, "hz", ("nx", "ny")),
                       (t, "fict", ("tsteps",))],
                      loop([("t", 0, "tsteps")], [
                          *loop([("j", 0, "ny")], "ey[0][j] = fict[t]"),
                          *loop([("i", 1, "nx"), ("j", 0, "ny")],
                                f"ey[i][j] = ey[i][j] - {lit(0.5, t)} * (hz[i][j] - hz[i - 1][j])"),
                          *loop([("i", 0, "nx"), ("j", 1, "ny")],
                                f"ex[i][j] = ex[i][j] - {lit(0.5, t)} * (hz[i][j] - hz[i][j - 1])"),
                          *loop([("i", 0, "nx - 1"), ("j", 0, "ny - 1")],
                                f"hz[i][j] = hz[i][j] - {lit(0.7, t)} * "
                                "(ex[i][j + 1] - ex[i][j] + ey[i + 1][j] - ey[i][j])")]),
                      {"tsteps": _tsteps(rng, 2), "nx": Scaled(), "ny": Scaled()}))
    t = rng.choice(("float", "double"))
    g = Grid(rng, 2, 1, t)
    out.append(Kernel(fam, f"residual2d_{TAG[t]}", f"residual of the 5-point Poisson operator, R = F - (4U - "
                      f"neighbours) ({t}).", t, g.ints, [(t, "U", g.dims()), (t, "F", g.dims()), (t, "R", g.dims())],
                      loop(g.bounds(), f"R[i][j] = F[i][j] - ({lit(4.0, t)} * U[i][j] - U[i - 1][j] - U[i + 1][j]"
                                       " - U[i][j - 1] - U[i][j + 1])"), g.sizes()))
    return out


def _nineteen() -> list[Offset]:
    return [p for p in box(3, 1) if _nnz(p) <= 2]


def stencil_3d(rng: random.Random) -> list[Kernel]:
    fam = "stencil_3d"
    jacobi = _Jacobi(rng, fam)
    out = []
    shapes = [("7pt", star(3, 1), _dist, ("jac", "copy", "pp")), ("27pt", box(3, 1), _nnz, ("jac", "pp")),
              ("13pt", star(3, 2), _dist, ("jac", "copy")), ("19pt", _nineteen(), _nnz, ("jac", "pp")),
              ("25pt", star(3, 4), _dist, ("jac",))]
    for label, pts, kl, forms in shapes:
        for form in forms:
            suffix = {"jac": "", "copy": "_copy", "pp": "_pp"}[form]
            out.append(jacobi(f"jacobi3d_{label}{suffix}", "3-D stencil", pts, kl, form))
    out.append(jacobi("heat3d_pp", "3-D explicit heat equation", star(3, 1), _dist, "pp", expr="heat"))
    out.append(jacobi("seidel3d_7pt", "3-D 7-point Gauss-Seidel sweep", star(3, 1), _dist, "seidel"))
    out.append(jacobi("seidel3d_7pt_t", "3-D 7-point Gauss-Seidel", star(3, 1), _dist, "seidel_t"))
    out.append(jacobi("seidel3d_27pt_t", "3-D 27-point Gauss-Seidel averaging", box(3, 1), _nnz,
                      "seidel_t", expr="mean"))
    out.append(jacobi("jacobi3d_7pt_kji", "3-D 7-point stencil with the loops reversed (k outer)",
                      star(3, 1), _dist, "jac", order="kji"))
    out.append(jacobi("jacobi3d_7pt_halo_copy", "3-D 7-point stencil", star(3, 1), _dist, "copy",
                      halo=True))
    out.append(jacobi("aniso3d_7pt", "3-D anisotropic 7-point stencil", star(3, 1), _aniso, "jac"))
    out.append(jacobi("blur3d_27pt", "3-D 3x3x3 box average", box(3, 1), _nnz, "jac", expr="mean"))
    t = rng.choice(("float", "double"))
    g = Grid(rng, 3, 1, t)
    rhs = (f"{lit(0.14, t)} * (c0[i][j][k] * A[i][j][k] + c1[i][j][k] * (A[i - 1][j][k] + A[i + 1][j][k])\n"
           f"+ c2[i][j][k] * (A[i][j - 1][k] + A[i][j + 1][k])\n+ c3[i][j][k] * (A[i][j][k - 1] + A[i][j][k + 1]))")
    out.append(Kernel(fam, f"varcoef3d_{TAG[t]}", f"3-D 7-point stencil with per-point coefficient arrays ({t}).", t,
                      g.ints, [(t, n, g.dims()) for n in ("A", "B", "c0", "c1", "c2", "c3")],
                      loop(g.bounds(), f"B[i][j][k] = {rhs}"), g.sizes()))
    t = rng.choice(("float", "double"))
    g = Grid(rng, 3, 1, t)
    lap = _join([ref("U", p) for p in star(3, 1)[1:]], 56) + f" - {lit(6.0, t)} * U[i][j][k]"
    out.append(Kernel(fam, f"wave3d_{TAG[t]}", f"3-D wave equation, leapfrog with three rotated levels ({t}).", t,
                      ["tsteps", *g.ints], [(t, "P", g.dims()), (t, "U", g.dims()), (t, "N", g.dims())],
                      loop([("t", 0, "tsteps")], [
                          *loop(g.bounds(), f"N[i][j][k] = {lit(2.0, t)} * U[i][j][k] - P[i][j][k]\n"
                                            f"+ {lit(0.05, t)} * ({lap})"),
                          *loop(g.bounds(), ["P[i][j][k] = U[i][j][k]", "U[i][j][k] = N[i][j][k]"])]),
                      g.sizes(_tsteps(rng, 3))))
    t = rng.choice(("float", "double"))
    g = Grid(rng, 3, 1, t)
    out.append(Kernel(fam, f"divergence3d_{TAG[t]}", f"divergence of a vector field by central differences, "
                      f"three input components ({t}).", t, g.ints,
                      [(t, n, g.dims()) for n in ("U", "V", "W", "D")],
                      loop(g.bounds(), f"D[i][j][k] = {lit(0.5, t)} * (U[i + 1][j][k] - U[i - 1][j][k]\n"
                                       "+ V[i][j + 1][k] - V[i][j - 1][k] + W[i][j][k + 1] - W[i][j][k - 1])"),
                      g.sizes()))
    t = rng.choice(("float", "double"))
    g = Grid(rng, 3, 1, t)
    nbs = [ref("U", p) for p in star(3, 1)[1:]]
    nb = " - ".join(nbs[:3]) + "\n- " + " - ".join(nbs[3:])
    out.append(Kernel(fam, f"residual3d_{TAG[t]}", f"residual of the 7-point Poisson operator ({t}).", t, g.ints,
                      [(t, "U", g.dims()), (t, "F", g.dims()), (t, "R", g.dims())],
                      loop(g.bounds(), f"R[i][j][k] = F[i][j][k] - ({lit(6.0, t)} * U[i][j][k] - {nb})"), g.sizes()))
    return out
