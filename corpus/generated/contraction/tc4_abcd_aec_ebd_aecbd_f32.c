/*
 * four-index result from two three-index tensors: aec,ebd->abcd, loop order aecbd (float).
 */
void tc4_abcd_aec_ebd_aecbd_f32(int na, int nb, int nc, int nd, int ne, float C[na][nb][nc][nd],
                                float A[na][ne][nc], float B[ne][nb][nd])
{
    int a, e, c, b, d;

    for (a = 0; a < na; a++)
        for (e = 0; e < ne; e++)
            for (c = 0; c < nc; c++)
                for (b = 0; b < nb; b++)
                    for (d = 0; d < nd; d++)
                        C[a][b][c][d] += A[a][e][c] * B[e][b][d];
}
