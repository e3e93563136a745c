/*
 * three-index result with permuted output: adb,dc->cba, loop order adbc (double).
 */
void tc3_cba_adb_dc_f64(int na, int nb, int nc, int nd, double C[nc][nb][na], double A[na][nd][nb],
                        double B[nd][nc])
{
    for (int a = 0; a < na; a++)
        for (int d = 0; d < nd; d++)
            for (int b = 0; b < nb; b++)
                for (int c = 0; c < nc; c++)
                    C[c][b][a] += A[a][d][b] * B[d][c];
}
