/*
 * copy of the interior of a padded matrix, B[i][j] = A[i + 1][j + 1] (int).
 */
void copy_interior_i32(int n, int m, int A[n + 2][m + 2], int B[n][m])
{
    for (int i = 0; i < n; ++i)
        for (int j = 0; j < m; ++j)
            B[i][j] = A[i + 1][j + 1];
}
