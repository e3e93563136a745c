/*
 * four-index result from two three-index tensors: aec,ebd->abcd, loop order abcde (double).
 */
void tc4_abcd_aec_ebd_abcde_f64(int na, int nb, int nc, int nd, int ne, double C[na][nb][nc][nd],
                                double A[na][ne][nc], double B[ne][nb][nd])
{
    int a, b, c, d, e;

    for (a = 0; a < na; a++)
        for (b = 0; b < nb; b++)
            for (c = 0; c < nc; c++)
                for (d = 0; d < nd; d++)
                    for (e = 0; e < ne; e++)
                        C[a][b][c][d] += A[a][e][c] * B[e][b][d];
}
