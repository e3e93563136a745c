/*
 * tensor-times-matrix with the factor matrix applied from the left: dbc,ad->abc, loop order adbc
 * (double).
 */
void ttm_mode1_t_adbc_f64(int na, int nb, int nc, int nd, double C[na][nb][nc],
                          double X[nd][nb][nc], double U[na][nd])
{
    for (int a = 0; a < na; a++)
        for (int d = 0; d < nd; d++)
            for (int b = 0; b < nb; b++)
                for (int c = 0; c < nc; c++)
                    C[a][b][c] += X[d][b][c] * U[a][d];
}
