/*
 * tensor-times-matrix on the first mode: ad,dbc->abc, loop order adbc (float).
 */
void ttm_mode1_adbc_f32(int na, int nb, int nc, int nd, float C[na][nb][nc], float A[na][nd],
                        float B[nd][nb][nc])
{
    int a, d, b, c;

    for (a = 0; a < na; a++)
        for (d = 0; d < nd; d++)
            for (b = 0; b < nb; b++)
                for (c = 0; c < nc; c++)
                    C[a][b][c] += A[a][d] * B[d][b][c];
}
