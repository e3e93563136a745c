/*
 * C = A B (jki order), then every column scaled by s[j] (marked region) (double).
 */
void gemm_scale_cols_f64(int ni, int nj, int nk, double C[ni][nj], double A[ni][nk],
                         double B[nk][nj], double s[nj])
{
    int j, k, i;

#pragma scop
    for (j = 0; j < nj; ++j)
        for (k = 0; k < nk; ++k)
            for (i = 0; i < ni; ++i)
                C[i][j] += A[i][k] * B[k][j];
    for (i = 0; i < ni; ++i)
        for (j = 0; j < nj; ++j)
            C[i][j] *= s[j];
#pragma endscop
}
