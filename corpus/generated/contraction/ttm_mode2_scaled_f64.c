/*
 * tensor-times-matrix on the middle mode: adc,bd->abc, loop order abdc (double).
 */
void ttm_mode2_scaled_f64(int na, int nb, int nc, int nd, double C[na][nb][nc],
                          double X[na][nd][nc], double U[nb][nd])
{
    for (int a = 0; a < na; ++a)
        for (int b = 0; b < nb; ++b)
            for (int d = 0; d < nd; ++d)
                for (int c = 0; c < nc; ++c)
                    C[a][b][c] += X[a][d][c] * U[b][d];
}
