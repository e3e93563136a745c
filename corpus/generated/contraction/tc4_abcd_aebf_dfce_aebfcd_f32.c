/*
 * four-index contraction over two indices: aebf,dfce->abcd, loop order aebfcd (float).
 */
void tc4_abcd_aebf_dfce_aebfcd_f32(int na, int nb, int nc, int nd, int ne, int nf,
                                   float C[na][nb][nc][nd], float A[na][ne][nb][nf],
                                   float B[nd][nf][nc][ne])
{
    for (int a = 0; a < na; a++)
        for (int e = 0; e < ne; e++)
            for (int b = 0; b < nb; b++)
                for (int f = 0; f < nf; f++)
                    for (int c = 0; c < nc; c++)
                        for (int d = 0; d < nd; d++)
                            C[a][b][c][d] += A[a][e][b][f] * B[d][f][c][e];
}
