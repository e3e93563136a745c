/*
 * bilinear form of a three-index tensor with two vectors: abc,b,c->a, loop order abc (double).
 */
void bilinear_f64(int na, int nb, int nc, double C[na], double T[na][nb][nc], double x[nb],
                  double z[nc])
{
    for (int a = 0; a < na; a++)
        for (int b = 0; b < nb; b++)
            for (int c = 0; c < nc; c++)
                C[a] += T[a][b][c] * x[b] * z[c];
}
