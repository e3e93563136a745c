"""C kernels that tests in several packages parse, written once.

``GEMM`` accumulates into ``C[i][j]`` directly (``k`` carries the reduction); ``MATMUL`` is the textbook
form with a scalar accumulator ``s`` (as in ``examples/matmul.c``), which pins the loops around it until
it is expanded. Tests derive variants with ``str.replace`` on these exact texts.
"""

GEMM = """
void gemm(int n, double C[n][n], double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < n; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""
MATMUL = """
void f(int n, double C[n][n], double A[n][n], double B[n][n]) {
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = 0.0;
      for (int k = 0; k < n; k++)
        s += A[i][k] * B[k][j];
      C[i][j] = s;
    }
}
"""
