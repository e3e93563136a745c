/*
 * MTTKRP M[i][r] += X[i][j][k] B[j][r] C[k][r], loop order rijk (double).
 */
void mttkrp_rijk_f64(int ni, int nj, int nk, int nr, double M[ni][nr], double X[ni][nj][nk],
                     double B[nj][nr], double C[nk][nr])
{
    for (int r = 0; r < nr; r++)
        for (int i = 0; i < ni; i++)
            for (int j = 0; j < nj; j++)
                for (int k = 0; k < nk; k++)
                    M[i][r] += X[i][j][k] * B[j][r] * C[k][r];
}
