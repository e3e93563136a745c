/*
 * matrix result contracting a pair of indices in the same order: acd,cdb->ab, loop order acdb
 * (double).
 */
void tc_ab_acd_cdb_acdb_f64(int na, int nb, int nc, int nd, double C[na][nb], double A[na][nc][nd],
                            double B[nc][nd][nb])
{
    int a, c, d, b;

    for (a = 0; a < na; a++)
        for (c = 0; c < nc; c++)
            for (d = 0; d < nd; d++)
                for (b = 0; b < nb; b++)
                    C[a][b] += A[a][c][d] * B[c][d][b];
}
