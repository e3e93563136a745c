/*
 * tensor-times-vector on the first mode: abc,a->bc, loop order abc (float).
 */
void ttv_first_f32(int na, int nb, int nc, float C[nb][nc], float X[na][nb][nc], float v[na])
{
    for (int a = 0; a < na; ++a)
        for (int b = 0; b < nb; ++b)
            for (int c = 0; c < nc; ++c)
                C[b][c] += X[a][b][c] * v[a];
}
