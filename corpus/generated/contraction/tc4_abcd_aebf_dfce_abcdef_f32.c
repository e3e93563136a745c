/*
 * four-index contraction over two indices: aebf,dfce->abcd, loop order abcdef (float).
 */
void tc4_abcd_aebf_dfce_abcdef_f32(int na, int nb, int nc, int nd, int ne, int nf,
                                   float C[na][nb][nc][nd], float A[na][ne][nb][nf],
                                   float B[nd][nf][nc][ne])
{
    int a, b, c, d, e, f;

    for (a = 0; a < na; a++)
        for (b = 0; b < nb; b++)
            for (c = 0; c < nc; c++)
                for (d = 0; d < nd; d++)
                    for (e = 0; e < ne; e++)
                        for (f = 0; f < nf; f++)
                            C[a][b][c][d] += A[a][e][b][f] * B[d][f][c][e];
}
