/*
 * CSR sparse matrix-vector product y[i] += val[j] * x[col[j]] (double).
 */
void spmv_csr_f64(int n, int m, int nnz, int rowptr[n + 1], int col[nnz], double val[nnz],
                  double x[m], double y[n])
{
    for (int i = 0; i < n; i++)
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            y[i] += val[j] * x[col[j]];
}
