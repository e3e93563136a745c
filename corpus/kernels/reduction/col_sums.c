/*
 * Column sums of an int matrix into long accumulators (cs is zeroed by the
 * caller). Rows are the outer loop, so the sums accumulate across it.
 */
void col_sums(int m, int n, int M[m][n], long cs[n])
{
    int i, j;

    for (i = 0; i < m; i++)
        for (j = 0; j < n; j++)
            cs[j] += M[i][j];
}
