/*
 * inclusive prefix sums along every row, in place (a scan) (double).
 */
void prefix_rows_f64(int n, int m, double A[n][m])
{
    for (int i = 0; i < n; i++)
        for (int j = 1; j < m; j++)
            A[i][j] += A[i][j - 1];
}
