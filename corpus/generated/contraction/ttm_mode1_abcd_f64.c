/*
 * tensor-times-matrix on the first mode: ad,dbc->abc, loop order abcd (double).
 */
void ttm_mode1_abcd_f64(int na, int nb, int nc, int nd, double C[na][nb][nc], double A[na][nd],
                        double B[nd][nb][nc])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                for (int d = 0; d < nd; d++)
                    C[a][b][c] += A[a][d] * B[d][b][c];
}
