/*
 * CSC sparse matrix-vector product: a scatter y[row[j]] += val[j] * x[c] per column (double).
 */
void spmv_csc_f64(int n, int m, int nnz, int colptr[m + 1], int row[nnz], double val[nnz],
                  double x[m], double y[n])
{
    int c, j;

    for (c = 0; c < m; c++)
        for (j = colptr[c]; j < colptr[c + 1]; j++)
            y[row[j]] += val[j] * x[c];
}
