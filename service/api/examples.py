"""Request examples of the OpenAPI description (``/docs`` offers them to try); each is a request the
route accepts, and ``tests/service/test_api_openapi.py`` sends every one of them."""

from __future__ import annotations

from typing import Any

MATMUL = """\
void matmul(int n, double A[n][n], double B[n][n], double C[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""

WITH_HEADER = """\
#include "sizes.h"
static double a[N][N], b[N][N];
void transpose_scale(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      a[j][i] = SCALE * b[i][j];
}
"""

WHOLE_PROGRAM = """\
#include <stdio.h>
#define N 600
static double a[N][N], b[N][N];
static void kernel(void) {
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++)
      a[j][i] = b[j][i] * 2.0 + 1.0;
}
int main(void) {
  for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) b[i][j] = i - j;
  kernel();
  double s = 0; for (int i = 0; i < N; i++) for (int j = 0; j < N; j++) s += a[i][j];
  printf("%f\\n", s);
  return 0;
}
"""

_MATMUL_PROGRAM: dict[str, Any] = {"source": MATMUL, "params": {"n": 512}, "name": "matmul.c"}
_HEADER_PROGRAM: dict[str, Any] = {"source": WITH_HEADER, "headers": {"sizes.h": "#define N 1024\n"},
                                   "defines": {"SCALE": "2.0"}, "name": "transpose.c"}

Examples = dict[str, dict[str, Any]]

PROGRAM_EXAMPLES: Examples = {
    "matmul": {"summary": "A kernel with a size parameter", "value": _MATMUL_PROGRAM},
    "headers": {"summary": "Quoted includes and macros travel with the source",
                "description": "`headers` holds the files the source includes with `#include \"...\"`; "
                               "`defines` are `-D` macros. The server reads no file of its own.",
                "value": _HEADER_PROGRAM},
}

SUGGESTIONS_EXAMPLES: Examples = {
    "default": {"summary": "Database answers; a tuning job when no neighbour is close",
                "value": {**_MATMUL_PROGRAM, "k": 5}},
    "no-fallback": {"summary": "Database answers only, nothing enqueued",
                    "value": {**_MATMUL_PROGRAM, "k": 3, "fallback": False}},
    "evaluate": {"summary": "Compile, verify and time the adapted recipes (202: a job to poll)",
                 "value": {**_MATMUL_PROGRAM, "params": {"n": 256}, "k": 3, "evaluate": True, "fallback": False}},
    "whole-program": {"summary": "Also time the whole program, original against tuned (202: a job to poll)",
                      "description": "The program must define `main`; `run` is how to run it, `{program}` "
                                     "standing for the executable.",
                      "value": {"source": WHOLE_PROGRAM, "function": "kernel", "name": "scale.c", "k": 3,
                                "evaluate": "program", "run": "{program}", "fallback": False}},
}

SEARCH_EXAMPLES: Examples = {
    "program": {"summary": "The stored nests nearest to a program's first nest",
                "value": {"program": _MATMUL_PROGRAM, "k": 5}},
    "vector": {"summary": "The stored nests nearest to an embedding",
               "description": "The vector has the current model's dimensions (`GET /v1/nests/{id}` shows one).",
               "value": {"vector": [0.0] * 16, "k": 3}},
}

JOB_EXAMPLES: Examples = {
    "stored-nest": {"summary": "Tune a stored nest (its stored parameter values are the default)",
                    "value": {"nest_id": 1, "params": {"n": 512}, "budget": 20}},
    "program": {"summary": "Store a program and tune its first nest, trying a recipe first",
                "value": {"program": _MATMUL_PROGRAM, "nest": 0, "budget": 20, "seed": 1,
                          "warm_start": [{"steps": [{"op": "interchange", "order": [0, 2, 1]},
                                                    {"op": "parallelize", "loop": 0}]}]}},
}
