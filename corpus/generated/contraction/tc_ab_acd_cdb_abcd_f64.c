/*
 * matrix result contracting a pair of indices in the same order: acd,cdb->ab, loop order abcd
 * (double).
 */
void tc_ab_acd_cdb_abcd_f64(int na, int nb, int nc, int nd, double C[na][nb], double A[na][nc][nd],
                            double B[nc][nd][nb])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                for (int d = 0; d < nd; d++)
                    C[a][b] += A[a][c][d] * B[c][d][b];
}
