/*
 * 2mm in ikj order: tmp = A B, D = D + tmp C, initialisation loops inside the row loop (marked
 * region) (double).
 */
void two_mm_ikj_f64(int ni, int nj, int nk, int nl, double tmp[ni][nj], double A[ni][nk],
                    double B[nk][nj], double C[nj][nl], double D[ni][nl])
{
    int i, j, k;

#pragma scop
    for (i = 0; i < ni; i++) {
        for (j = 0; j < nj; j++)
            tmp[i][j] = 0.0;
        for (k = 0; k < nk; k++)
            for (j = 0; j < nj; j++)
                tmp[i][j] += A[i][k] * B[k][j];
    }
    for (i = 0; i < ni; i++)
        for (k = 0; k < nj; k++)
            for (j = 0; j < nl; j++)
                D[i][j] += tmp[i][k] * C[k][j];
#pragma endscop
}
