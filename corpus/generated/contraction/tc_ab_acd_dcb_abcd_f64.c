/*
 * two-index result from two contracted indices: acd,dcb->ab, loop order abcd (double).
 */
void tc_ab_acd_dcb_abcd_f64(int na, int nb, int nc, int nd, double C[na][nb], double A[na][nc][nd],
                            double B[nd][nc][nb])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                for (int d = 0; d < nd; d++)
                    C[a][b] += A[a][c][d] * B[d][c][b];
}
