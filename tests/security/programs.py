"""Generators of hostile-but-valid C programs for the analysis limits (issue 10, items 4 and 5)."""

from __future__ import annotations


def many_statements(count: int) -> str:
    """One loop whose body holds ``count`` assignments chained through four arrays (~30 bytes each)."""
    body = "\n".join(f"    A{k % 4}[i] = A{(k + 1) % 4}[i] + {k}.0;" for k in range(count))
    return ("void f(int n, double A0[n], double A1[n], double A2[n], double A3[n]) {\n"
            f"  for (int i = 0; i < n; i++) {{\n{body}\n  }}\n}}\n")


def deep_nest(depth: int) -> str:
    """``depth`` perfectly nested loops around one accumulation."""
    its = [f"i{k}" for k in range(depth)]
    head = "".join(f"{'  ' * k}for (int {i} = 0; {i} < n; {i}++)\n" for k, i in enumerate(its))
    subs = f"{its[0]} + {its[-1]}" if depth > 1 else its[0]
    return (f"void f(int n, double A[2 * n]) {{\n{head}{'  ' * depth}A[{subs}] += 1.0;\n}}\n")


def long_sum(terms: int) -> str:
    """One statement adding ``terms`` constants: a left-leaning expression tree ``terms`` deep."""
    rhs = " + ".join(["1.0"] * terms)
    return f"void f(int n, double A[n]) {{\n  for (int i = 0; i < n; i++)\n    A[i] = {rhs};\n}}\n"


def deep_and_long(depth: int, statements: int) -> str:
    """``depth`` nested loops around ``statements`` assignments chained through four arrays."""
    its = [f"i{k}" for k in range(depth)]
    head = "".join(f"for (int {i} = 0; {i} < n; {i}++)\n" for i in its)
    sub = f"{its[0]} + {its[-1]}"
    body = "\n".join(f"  A{k % 4}[{sub}] = A{(k + 1) % 4}[{sub}] + {k}.0;" for k in range(statements))
    return (f"void f(int n, double A0[2*n], double A1[2*n], double A2[2*n], double A3[2*n]) {{\n{head}{{\n"
            f"{body}\n}}\n}}\n")
