/*
 * tensor-times-matrix on the last mode: abd,dc->abc, loop order adbc (float).
 */
void ttm_mode3_adbc_f32(int na, int nb, int nc, int nd, float C[na][nb][nc], float A[na][nb][nd],
                        float B[nd][nc])
{
    int a, d, b, c;

    for (a = 0; a < na; a++)
        for (d = 0; d < nd; d++)
            for (b = 0; b < nb; b++)
                for (c = 0; c < nc; c++)
                    C[a][b][c] += A[a][b][d] * B[d][c];
}
