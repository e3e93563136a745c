/*
 * y = A^T x with the output cleared in its own loop, then rows streamed (marked region, two nests)
 * (double).
 */
void gemv_t_init_f64(int n, int m, double A[n][m], double x[n], double y[m])
{
#pragma scop
    for (int j = 0; j < m; ++j)
        y[j] = 0.0;
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            y[j] += A[i][j] * x[i];
#pragma endscop
}
