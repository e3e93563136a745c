/*
 * two matrix-vector products summed: y += A x + B z (float).
 */
void gemv2_f32(int n, int m, float A[n][m], float B[n][m], float x[m], float z[m], float y[n])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < m; j++)
            y[i] += A[i][j] * x[j] + B[i][j] * z[j];
}
