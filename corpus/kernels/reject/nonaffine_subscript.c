/* Rejected (non-affine subscript): the product of two iterators indexes A, whose extent is not declared. */
#define CAP 4096

void iterator_product(int n, double *A, double B[n][n])
{
    int i, j;

    for (i = 0; i < n; i++)
        for (j = 0; j < n; j++)
            B[i][j] = A[i * j];
}
