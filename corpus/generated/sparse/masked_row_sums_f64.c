/*
 * row sums over the entries a mask selects (double).
 */
void masked_row_sums_f64(int n, int m, int mask[n][m], double A[n][m], double r[n])
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < m; j++)
            if (mask[i][j] > 0)
                r[i] += A[i][j];
}
