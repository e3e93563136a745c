/*
 * MTTKRP M[i][r] += X[i][j][k] B[j][r] C[k][r], loop order ijkr (double).
 */
void mttkrp_ijkr_f64(int ni, int nj, int nk, int nr, double M[ni][nr], double X[ni][nj][nk],
                     double B[nj][nr], double C[nk][nr])
{
    for (int i = 0; i < ni; i++)
        for (int j = 0; j < nj; j++)
            for (int k = 0; k < nk; k++)
                for (int r = 0; r < nr; r++)
                    M[i][r] += X[i][j][k] * B[j][r] * C[k][r];
}
