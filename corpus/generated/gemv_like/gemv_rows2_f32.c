/*
 * gemv computing two output rows per outer iteration (manually unrolled by 2) (float).
 */
void gemv_rows2_f32(int n, int m, float A[2 * n][m], float x[m], float y[2 * n])
{
    int i, j;

    for (i = 0; i < n; ++i)
        for (j = 0; j < m; ++j) {
            y[2 * i] += A[2 * i][j] * x[j];
            y[2 * i + 1] += A[2 * i + 1][j] * x[j];
        }
}
