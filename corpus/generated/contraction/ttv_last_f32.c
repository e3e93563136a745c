/*
 * tensor-times-vector on the last mode: abc,c->ab, loop order abc (float).
 */
void ttv_last_f32(int na, int nb, int nc, float C[na][nb], float X[na][nb][nc], float v[nc])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                C[a][b] += X[a][b][c] * v[c];
}
