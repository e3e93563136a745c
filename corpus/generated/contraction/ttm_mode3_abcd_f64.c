/*
 * tensor-times-matrix on the last mode: abd,dc->abc, loop order abcd (double).
 */
void ttm_mode3_abcd_f64(int na, int nb, int nc, int nd, double C[na][nb][nc], double A[na][nb][nd],
                        double B[nd][nc])
{
    int a, b, c, d;

    for (a = 0; a < na; a++)
        for (b = 0; b < nb; b++)
            for (c = 0; c < nc; c++)
                for (d = 0; d < nd; d++)
                    C[a][b][c] += A[a][b][d] * B[d][c];
}
