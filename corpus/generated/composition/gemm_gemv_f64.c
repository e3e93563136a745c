/*
 * T = A B followed by y = T x (marked region) (double).
 */
void gemm_gemv_f64(int ni, int nj, int nk, double T[ni][nj], double A[ni][nk], double B[nk][nj],
                   double x[nj], double y[ni])
{
#pragma scop
    for (int i = 0; i < ni; i++)
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                T[i][j] += A[i][k] * B[k][j];
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            y[i] += T[i][j] * x[j];
#pragma endscop
}
