/*
 * two-index result from two contracted indices: acd,dcb->ab, loop order acdb (float).
 */
void tc_ab_acd_dcb_acdb_f32(int na, int nb, int nc, int nd, float C[na][nb], float A[na][nc][nd],
                            float B[nd][nc][nb])
{
    int a, c, d, b;

    for (a = 0; a < na; a++)
        for (c = 0; c < nc; c++)
            for (d = 0; d < nd; d++)
                for (b = 0; b < nb; b++)
                    C[a][b] += A[a][c][d] * B[d][c][b];
}
