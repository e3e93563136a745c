/*
 * Two chained products in one marked region: T <- alpha * A B, then
 * D <- beta * D + T C.
 */
void two_mm(int ni, int nj, int nk, int nl, double alpha, double beta,
            double T[ni][nj], double A[ni][nk], double B[nk][nj],
            double C[nj][nl], double D[ni][nl])
{
    int i, j, k;

#pragma scop
    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++) {
            T[i][j] = 0.0;
            for (k = 0; k < nk; k++)
                T[i][j] += alpha * A[i][k] * B[k][j];
        }
    for (i = 0; i < ni; i++)
        for (j = 0; j < nl; j++) {
            D[i][j] *= beta;
            for (k = 0; k < nj; k++)
                D[i][j] += T[i][k] * C[k][j];
        }
#pragma endscop
}
