/*
 * y = A^T (A x) row by row: tmp[i] = A[i] . x, then y += tmp[i] A[i] (float).
 */
void atax_f32(int n, int m, float A[n][m], float x[m], float y[m], float tmp[n])
{
    for (int i = 0; i < n; i++) {
        tmp[i] = 0.0f;
        for (int j = 0; j < m; j++)
            tmp[i] += A[i][j] * x[j];
        for (int j = 0; j < m; j++)
            y[j] += A[i][j] * tmp[i];
    }
}
