/*
 * y = A (B x) through an intermediate vector (marked region) (double).
 */
void two_gemv_f64(int n, int m, int p, double A[n][m], double B[m][p], double x[p], double tv[m],
                  double y[n])
{
#pragma scop
    for (int i = 0; i < m; i++)
        for (int j = 0; j < p; j++)
            tv[i] += B[i][j] * x[j];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            y[i] += A[i][j] * tv[j];
#pragma endscop
}
