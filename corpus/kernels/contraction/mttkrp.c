/*
 * Matricised tensor times Khatri-Rao product, mode 1:
 * M[i][r] += X[i][j][k] * F[j][r] * G[k][r], with the rank loop innermost.
 */
void mttkrp(int ni, int nj, int nk, int rank,
            double M[ni][rank], double X[ni][nj][nk], double F[nj][rank], double G[nk][rank])
{
    int i, j, k, r;

    for (i = 0; i < ni; i++)
        for (j = 0; j < nj; j++)
            for (k = 0; k < nk; k++)
                for (r = 0; r < rank; r++)
                    M[i][r] += X[i][j][k] * F[j][r] * G[k][r];
}
