/*
 * CCSD-like particle-hole contraction: acik,cbkj->abij, loop order abijck (float).
 */
void ccsd_like_abijck_f32(int na, int nb, int nc, int ni, int nj, int nk, float C[na][nb][ni][nj],
                          float A[na][nc][ni][nk], float B[nc][nb][nk][nj])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int i = 0; i < ni; i++)
                for (int j = 0; j < nj; j++)
                    for (int c = 0; c < nc; c++)
                        for (int k = 0; k < nk; k++)
                            C[a][b][i][j] += A[a][c][i][k] * B[c][b][k][j];
}
