/*
 * D = (A B) C^T through an intermediate (marked region) (double).
 */
void abct_f64(int ni, int nj, int nk, int nl, double T[ni][nj], double A[ni][nk], double B[nk][nj],
              double C[nl][nj], double D[ni][nl])
{
#pragma scop
    for (int i = 0; i < ni; i++)
        for (int k = 0; k < nk; k++)
            for (int j = 0; j < nj; j++)
                T[i][j] += A[i][k] * B[k][j];
    for (int i = 0; i < ni; i++)
        for (int l = 0; l < nl; l++)
            for (int j = 0; j < nj; j++)
                D[i][l] += T[i][j] * C[l][j];
#pragma endscop
}
