/*
 * batch-last layout traversed with the batch loop outermost (strided) (double).
 */
void bgemm_last_bikj_f64(int nb, int ni, int nj, int nk, double C[ni][nj][nb],
                         double A[ni][nk][nb], double B[nk][nj][nb])
{
    for (int b = 0; b < nb; b++)
        for (int i = 0; i < ni; i++)
            for (int k = 0; k < nk; k++)
                for (int j = 0; j < nj; j++)
                    C[i][j][b] += A[i][k][b] * B[k][j][b];
}
