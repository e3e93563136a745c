/*
 * gemv on a sub-block: y[i] += A[i + r0][j + c0] x[j] with offsets 1 and 2 (float).
 */
void gemv_sub_f32(int n, int m, float A[n + 1][m + 2], float x[m], float y[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[i] += A[i + 1][j + 2] * x[j];
}
