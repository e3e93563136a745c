/* One 7-point sweep on a 3-D grid with centre weight c0 and neighbour weight c1. */
void heat3d(int n, double c0, double c1, double A[n][n][n], double B[n][n][n])
{
    int i, j, k;

    for (i = 1; i < n - 1; i++)
        for (j = 1; j < n - 1; j++)
            for (k = 1; k < n - 1; k++)
                B[i][j][k] = c0 * A[i][j][k]
                             + c1 * (A[i - 1][j][k] + A[i + 1][j][k]
                                     + A[i][j - 1][k] + A[i][j + 1][k]
                                     + A[i][j][k - 1] + A[i][j][k + 1]);
}
