/*
 * ELLPACK product: w entries per row, y[i] += val[i][k] * x[col[i][k]] (float).
 */
void spmv_ell_f32(int n, int m, int w, int col[n][w], float val[n][w], float x[m], float y[n])
{
    for (int i = 0; i < n; i++)
        for (int k = 0; k < w; k++)
            y[i] += val[i][k] * x[col[i][k]];
}
