/*
 * CCSD-like particle-hole contraction: acik,cbkj->abij, loop order acikbj (double).
 */
void ccsd_like_acikbj_f64(int na, int nb, int nc, int ni, int nj, int nk, double C[na][nb][ni][nj],
                          double A[na][nc][ni][nk], double B[nc][nb][nk][nj])
{
    for (int a = 0; a < na; a++)
        for (int c = 0; c < nc; c++)
            for (int i = 0; i < ni; i++)
                for (int k = 0; k < nk; k++)
                    for (int b = 0; b < nb; b++)
                        for (int j = 0; j < nj; j++)
                            C[a][b][i][j] += A[a][c][i][k] * B[c][b][k][j];
}
