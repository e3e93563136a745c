/* y = A x, A in CSR (rowptr, col, val): the row loop's bounds are read from rowptr. */
void spmv_csr(int n, int m, int nnz, const int rowptr[n + 1], const int col[nnz], const double val[nnz],
              const double x[m], double y[n])
{
    for (int i = 0; i < n; i++) {
        double s = 0.0;
        for (int j = rowptr[i]; j < rowptr[i + 1]; j++)
            s += val[j] * x[col[j]];
        y[i] = s;
    }
}
