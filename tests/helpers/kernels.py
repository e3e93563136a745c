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
REDUCTION = GEMM  # k carries the reduction into C[i][j]
SKEWED = """
void f(int n, double A[n][n]) {
  for (int i = 1; i < n; i++)
    for (int j = 0; j < n - 1; j++)
      A[i][j] = A[i - 1][j + 1] + 1.0;
}
"""
JACOBI_1D = """
void f(int n, int tsteps, double A[n]) {
  for (int t = 0; t < tsteps; t++)
    for (int i = 1; i < n - 1; i++)
      A[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0;
}
"""
AXPY = """
void axpy(int n, double a, double x[n], double y[n]) {
  for (int i = 0; i < n; i++)
    y[i] = a * x[i] + y[i];
}
"""


# Two nests in one function, a fill and a product: a program whose nests go through a suggestion together.
TWO_NESTS = """\
/* two nests */
void dense(int m, int n, int p, double A[m][p], double B[p][n], double b[n], double C[m][n]) {
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      C[i][j] = b[j];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < n; j++)
      for (int k = 0; k < p; k++)
        C[i][j] += A[i][k] * B[k][j];
}
"""
